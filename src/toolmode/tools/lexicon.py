"""A small Chinese -> English lexicon of tool verbs and nouns for the default (lexical) tool search.

Tools are mostly documented in English; a Chinese query such as "读取文件" shares no term with
"Read a text file". `english_terms("读取文件")` gives `["read", "file"]`, and the tokeniser adds those
words to the Chinese characters and bigrams, so BM25 can match either language. The words are split
from a CJK run by forward maximum matching (longest entry first), which needs no segmenter.

The entries are common words of what tools do (read, write, list, search, send, convert, ...) and what
they act on (file, directory, web page, time, weather, email, ...), each with the English words tool
descriptions use. It is a vocabulary, not a translator: a query outside it still needs the semantic
ranker (`pip install -e ".[semantic-lite]"`, `--ranker fused`).
"""

from __future__ import annotations

from functools import lru_cache

_ENTRIES = """
读取 read|读 read|打开 open read|查看 view show read|显示 show display|看 view|阅读 read
写入 write|写 write|保存 save write|存 save store|存储 store storage|记录 record log|追加 append
创建 create|新建 create new|生成 generate create|建 create|制作 make create
删除 delete remove|删 delete|移除 remove|清除 clear delete|清空 clear
修改 modify edit update|编辑 edit|更新 update|改 change modify|替换 replace|重命名 rename
复制 copy|移动 move|上传 upload|下载 download|导出 export|导入 import|同步 sync
列出 list|列举 list|罗列 list|列表 list|清单 list|遍历 list walk
查找 find search|搜索 search|查询 query search lookup|检索 search retrieve|查 search lookup|找 find search
寻找 find search|搜 search|筛选 filter|过滤 filter|排序 sort|匹配 match
获取 get fetch|取得 get|拿 get|得到 get|抓取 fetch scrape|爬取 crawl scrape|拉取 fetch pull|请求 request
访问 visit access open|浏览 browse|打开网页 open web page
运行 run execute|执行 execute run|跑 run|启动 start launch|调用 call invoke|停止 stop|安装 install
计算 calculate compute calculator|算 calculate|求和 sum|求 calculate|统计 count statistics|计数 count
加 add plus|减 subtract minus|乘 multiply|除 divide|平方根 square root sqrt|开方 sqrt root|乘方 power
换算 convert|转换 convert|转成 convert|转为 convert|翻译 translate|解析 parse|格式化 format
压缩 compress zip|解压 extract unzip|编码 encode|解码 decode|加密 encrypt|解密 decrypt
发送 send|发 send|回复 reply|通知 notify notification|提醒 remind reminder|分享 share
预订 book reserve booking|订 book order|购买 buy purchase|买 buy|支付 pay payment|付款 pay payment
比较 compare|对比 compare|分析 analyze analysis|总结 summarize summary|摘要 summary|推荐 recommend
检查 check|验证 verify validate|测试 test|监控 monitor|跟踪 track|追踪 track|预测 predict forecast
学习 learn|练习 practice|规划 plan|计划 plan schedule|安排 schedule arrange|提交 submit|登录 login
画 draw|绘制 draw plot|识别 recognize detect|说 speak|朗读 read aloud speech|听 listen
文件 file|文档 document file|文本 text|文本文件 text file|内容 content|行 line|行数 lines|字符 characters
目录 directory folder|文件夹 folder directory|路径 path|工作区 workspace|磁盘 disk|表格 table spreadsheet csv
网页 web page|页面 page|网站 website site|网址 url|链接 link url|网络 web network|标题 title|网 web
命令 command|终端 terminal shell|脚本 script|程序 program code|代码 code|进程 process|系统 system
时间 time|几点 time|钟点 time|日期 date|星期 weekday day|今天 today date|现在 now current|当前 current
时区 timezone|当地 local|北京时间 beijing time|日历 calendar|倒计时 countdown timer|闹钟 alarm
天气 weather|气温 temperature weather|温度 temperature|下雨 rain weather|空气质量 air quality|预报 forecast
数学 math|算术 arithmetic|表达式 expression|公式 formula|数字 number|数 number|结果 result
邮件 email mail|电子邮件 email|短信 sms message|消息 message|聊天 chat|联系人 contact|电话 phone call
图片 image picture photo|照片 photo image|图像 image|视频 video|音乐 music song|歌曲 song music|音频 audio
新闻 news|股票 stock|股价 stock price|汇率 exchange rate currency|货币 currency|价格 price|天 day
地图 map|地址 address|位置 location|路线 route directions|导航 navigation directions|距离 distance
航班 flight|机票 flight ticket|酒店 hotel|旅行 travel trip|旅游 travel tourism|餐厅 restaurant
食谱 recipe|菜谱 recipe|外卖 food delivery|购物 shopping shop|商品 product|订单 order|快递 package shipping
工作 job work|招聘 job hiring|简历 resume|课程 course|论文 paper research|书 book|单词 word
翻 translate|语言 language|中文 chinese|英文 english|词典 dictionary|定义 definition
数据 data|数据库 database|记录表 table|报告 report|图表 chart|统计数据 statistics data
用户 user|账户 account|密码 password|二维码 qr code|链接地址 url link
错误 error|日志 log|警告 warning|大小 size|名称 name|类型 type|参数 parameter|配置 config configuration
工具 tool|函数 function|接口 api|服务器 server|服务 service
"""


def _parse(text: str) -> dict[str, tuple[str, ...]]:
    table: dict[str, tuple[str, ...]] = {}
    for entry in text.split("|"):
        parts = entry.split()
        if len(parts) >= 2:
            table[parts[0]] = tuple(parts[1:])
    return table


ZH_EN: dict[str, tuple[str, ...]] = _parse(_ENTRIES.replace("\n", "|"))
_LONGEST = max(len(word) for word in ZH_EN)


@lru_cache(maxsize=16384)
def english_terms(run: str) -> tuple[str, ...]:
    """English words for the lexicon entries in a run of CJK characters, in order (forward maximum matching)."""
    out: list[str] = []
    i = 0
    while i < len(run):
        for size in range(min(_LONGEST, len(run) - i), 0, -1):
            words = ZH_EN.get(run[i : i + size])
            if words is not None:
                out.extend(words)
                i += size
                break
        else:
            i += 1
    return tuple(out)
